{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "cpu-pi.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "cpu-pi.labels" -}}
helm.sh/chart: {{ include "cpu-pi.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "cpu-pi.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "cpu-pi-c1e3c4c-worker-%d.cpu-pi-c1e3c4c.mpi.svc slots=1" $i }}
{{- end }}
{{- end }}
