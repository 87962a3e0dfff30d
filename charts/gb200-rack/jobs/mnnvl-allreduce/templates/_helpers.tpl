{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "mnnvl-allreduce.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "mnnvl-allreduce.labels" -}}
helm.sh/chart: {{ include "mnnvl-allreduce.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "mnnvl-allreduce.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "mnnvl-allreduce-38223e4-worker-%d.mnnvl-allreduce-38223e4.frontier.svc slots=4" $i }}
{{- end }}
{{- end }}
