{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "netapp-resnet50.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "netapp-resnet50.labels" -}}
helm.sh/chart: {{ include "netapp-resnet50.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "netapp-resnet50.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "netapp-resnet50-e24c284-worker-%d.netapp-resnet50-e24c284.ai-training.svc slots=8" $i }}
{{- end }}
{{- end }}
