{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "llm-pretrain.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "llm-pretrain.labels" -}}
helm.sh/chart: {{ include "llm-pretrain.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "llm-pretrain.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "llm-pretrain-6d42bbd-worker-%d.llm-pretrain-6d42bbd.llm.svc slots=8" $i }}
{{- end }}
{{- end }}
