{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "accept-h100-perftest-rail6.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "accept-h100-perftest-rail6.labels" -}}
helm.sh/chart: {{ include "accept-h100-perftest-rail6.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "accept-h100-perftest-rail6.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "accept-h100-perftest-rail6-worker-%d.accept-h100-perftest-rail6.llm.svc slots=1" $i }}
{{- end }}
{{- end }}
