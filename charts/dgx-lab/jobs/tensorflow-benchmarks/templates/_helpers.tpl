{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "tensorflow-benchmarks.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "tensorflow-benchmarks.labels" -}}
helm.sh/chart: {{ include "tensorflow-benchmarks.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "tensorflow-benchmarks.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "tensorflow-benchmarks-d379870-worker-%d.tensorflow-benchmarks-d379870.ml-training.svc slots=1" $i }}
{{- end }}
{{- end }}
