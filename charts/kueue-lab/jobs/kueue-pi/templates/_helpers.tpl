{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "kueue-pi.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "kueue-pi.labels" -}}
helm.sh/chart: {{ include "kueue-pi.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "kueue-pi.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "kueue-pi-5c216f7-worker-%d.kueue-pi-5c216f7.research.svc slots=1" $i }}
{{- end }}
{{- end }}
