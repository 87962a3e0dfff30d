{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "pi.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "pi.labels" -}}
helm.sh/chart: {{ include "pi.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "pi.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "pi-44d7871-worker-%d.pi-44d7871.hpc.svc slots=1" $i }}
{{- end }}
{{- end }}
