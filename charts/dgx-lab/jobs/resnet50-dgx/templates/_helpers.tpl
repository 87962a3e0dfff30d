{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "resnet50-dgx.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "resnet50-dgx.labels" -}}
helm.sh/chart: {{ include "resnet50-dgx.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, exactly as mpi-operator names its workers. */}}
{{- define "resnet50-dgx.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "resnet50-dgx-529af53-worker-%d.resnet50-dgx-529af53.ml-training.svc slots=8" $i }}
{{- end }}
{{- end }}
