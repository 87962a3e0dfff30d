{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "vision-resnet50.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "vision-resnet50.labels" -}}
helm.sh/chart: {{ include "vision-resnet50.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "vision-resnet50.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "vision-resnet50-4ff0076-worker-%d.vision-resnet50-4ff0076.team-vision.svc slots=8" $i }}
{{- end }}
{{- end }}

{{/* Rankfile lines: local rank i of worker w is rank w*8+i, bound to the socket of GPU i's NIC. */}}
{{- define "vision-resnet50.rankfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "rank %d=vision-resnet50-4ff0076-worker-%d.vision-resnet50-4ff0076.team-vision.svc slot=0:0-19" (add (mul $i 8) 0) $i }}
{{ printf "rank %d=vision-resnet50-4ff0076-worker-%d.vision-resnet50-4ff0076.team-vision.svc slot=0:0-19" (add (mul $i 8) 1) $i }}
{{ printf "rank %d=vision-resnet50-4ff0076-worker-%d.vision-resnet50-4ff0076.team-vision.svc slot=0:0-19" (add (mul $i 8) 2) $i }}
{{ printf "rank %d=vision-resnet50-4ff0076-worker-%d.vision-resnet50-4ff0076.team-vision.svc slot=0:0-19" (add (mul $i 8) 3) $i }}
{{ printf "rank %d=vision-resnet50-4ff0076-worker-%d.vision-resnet50-4ff0076.team-vision.svc slot=1:0-19" (add (mul $i 8) 4) $i }}
{{ printf "rank %d=vision-resnet50-4ff0076-worker-%d.vision-resnet50-4ff0076.team-vision.svc slot=1:0-19" (add (mul $i 8) 5) $i }}
{{ printf "rank %d=vision-resnet50-4ff0076-worker-%d.vision-resnet50-4ff0076.team-vision.svc slot=1:0-19" (add (mul $i 8) 6) $i }}
{{ printf "rank %d=vision-resnet50-4ff0076-worker-%d.vision-resnet50-4ff0076.team-vision.svc slot=1:0-19" (add (mul $i 8) 7) $i }}
{{- end }}
{{- end }}
