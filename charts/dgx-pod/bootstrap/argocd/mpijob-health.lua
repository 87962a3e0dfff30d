-- Argo CD health of a Kubeflow MPIJob (kubeflow.org/v2beta1), from the conditions mpi-operator sets:
-- Created, Running, Restarting, Succeeded, Failed and Suspended, each "True" or "False".
-- Install it as the argocd-cm key resource.customizations.health.kubeflow.org_MPIJob.
-- Written for Lua 5.1, the language of Argo CD's interpreter (gopher-lua).
local hs = {status = "Progressing", message = "Waiting for mpi-operator to create the job"}
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
elseif current.Succeeded ~= nil then
  hs.status = "Healthy"
  hs.message = current.Succeeded
elseif current.Suspended ~= nil then
  hs.status = "Suspended"
  hs.message = current.Suspended
elseif current.Restarting ~= nil then
  hs.status = "Progressing"
  hs.message = current.Restarting
elseif current.Running ~= nil then
  hs.status = "Progressing"
  hs.message = current.Running
elseif current.Created ~= nil then
  hs.status = "Progressing"
  hs.message = current.Created
end
return hs
