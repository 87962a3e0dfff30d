-- Argo CD health of a Volcano Job (batch.volcano.sh/v1alpha1), from the phase Volcano's job controller sets in
-- status.state.phase (the CRD's enum: Pending, Aborting, Aborted, Running, Restarting, Completing, Completed,
-- Terminating, Terminated, Failed). Install it as the argocd-cm key resource.customizations.health.batch.volcano.sh_Job.
-- Written for Lua 5.1, the language of Argo CD's interpreter (gopher-lua).
local hs = {status = "Progressing", message = "Waiting for Volcano to create the job"}
if obj.status == nil or obj.status.state == nil or obj.status.state.phase == nil then
  return hs
end
local phase = obj.status.state.phase
local said = obj.status.state.message
if said == nil or said == "" then
  said = "Volcano Job " .. phase
end
hs.message = said
if phase == "Completed" then
  hs.status = "Healthy"
elseif phase == "Failed" or phase == "Aborted" or phase == "Aborting" or phase == "Terminated"
    or phase == "Terminating" then
  -- mpigen's launcher task ends a failed run with TerminateJob; Aborted is a user's or an error's doing.
  hs.status = "Degraded"
else
  -- Pending (queued, or the gang not yet complete), Running, Restarting, Completing
  hs.status = "Progressing"
end
return hs
