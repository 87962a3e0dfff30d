-- Argo CD health of a Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1), from the conditions Trainer sets:
-- Suspended, Complete (its JobSet completed) and Failed (its JobSet failed), each "True" or "False".
-- Install it as the argocd-cm key resource.customizations.health.trainer.kubeflow.org_TrainJob.
-- Written for Lua 5.1, the language of Argo CD's interpreter (gopher-lua).
local hs = {status = "Progressing", message = "Waiting for Kubeflow Trainer to create the job"}
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
local current = {}
for _, condition in ipairs(obj.status.conditions) do
  if condition.status == "True" then
    current[condition.type] = condition.message or condition.reason or condition.type
  end
end
if current.Failed ~= nil then
  hs.status = "Degraded"
  hs.message = current.Failed
elseif current.Complete ~= nil then
  hs.status = "Healthy"
  hs.message = current.Complete
elseif current.Suspended ~= nil then
  hs.status = "Suspended"
  hs.message = current.Suspended
else
  hs.message = "TrainJob running"
end
return hs
