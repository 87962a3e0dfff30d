{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "gb200-rack-infra.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "gb200-rack-infra.labels" -}}
helm.sh/chart: {{ include "gb200-rack-infra.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}
