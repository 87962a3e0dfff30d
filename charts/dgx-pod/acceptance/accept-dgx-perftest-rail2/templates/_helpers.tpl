{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "accept-dgx-perftest-rail2.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "accept-dgx-perftest-rail2.labels" -}}
helm.sh/chart: {{ include "accept-dgx-perftest-rail2.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "accept-dgx-perftest-rail2.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "accept-dgx-perftest-rail2-worker-%d.accept-dgx-perftest-rail2.team-vision.svc slots=1" $i }}
{{- end }}
{{- end }}
