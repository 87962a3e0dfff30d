{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "accept-gb200-all-reduce-pool.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "accept-gb200-all-reduce-pool.labels" -}}
helm.sh/chart: {{ include "accept-gb200-all-reduce-pool.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "accept-gb200-all-reduce-pool.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "accept-gb200-all-reduce-pool-worker-%d.accept-gb200-all-reduce-pool.frontier.svc slots=4" $i }}
{{- end }}
{{- end }}
