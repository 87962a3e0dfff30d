{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "kai-research.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "kai-research.labels" -}}
helm.sh/chart: {{ include "kai-research.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "kai-research.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "kai-research-11687c4-worker-%d.kai-research-11687c4.experiments.svc slots=8" $i }}
{{- end }}
{{- end }}

{{/* Rankfile lines: local rank i of worker w is rank w*8+i, bound to the socket of GPU i's NIC. */}}
{{- define "kai-research.rankfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "rank %d=kai-research-11687c4-worker-%d.kai-research-11687c4.experiments.svc slot=0:0-19" (add (mul $i 8) 0) $i }}
{{ printf "rank %d=kai-research-11687c4-worker-%d.kai-research-11687c4.experiments.svc slot=0:0-19" (add (mul $i 8) 1) $i }}
{{ printf "rank %d=kai-research-11687c4-worker-%d.kai-research-11687c4.experiments.svc slot=0:0-19" (add (mul $i 8) 2) $i }}
{{ printf "rank %d=kai-research-11687c4-worker-%d.kai-research-11687c4.experiments.svc slot=0:0-19" (add (mul $i 8) 3) $i }}
{{ printf "rank %d=kai-research-11687c4-worker-%d.kai-research-11687c4.experiments.svc slot=1:0-19" (add (mul $i 8) 4) $i }}
{{ printf "rank %d=kai-research-11687c4-worker-%d.kai-research-11687c4.experiments.svc slot=1:0-19" (add (mul $i 8) 5) $i }}
{{ printf "rank %d=kai-research-11687c4-worker-%d.kai-research-11687c4.experiments.svc slot=1:0-19" (add (mul $i 8) 6) $i }}
{{ printf "rank %d=kai-research-11687c4-worker-%d.kai-research-11687c4.experiments.svc slot=1:0-19" (add (mul $i 8) 7) $i }}
{{- end }}
{{- end }}
