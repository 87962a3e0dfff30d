{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "kai-allreduce.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "kai-allreduce.labels" -}}
helm.sh/chart: {{ include "kai-allreduce.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "kai-allreduce.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "kai-allreduce-1ecceb1-worker-%d.kai-allreduce-1ecceb1.training.svc slots=8" $i }}
{{- end }}
{{- end }}

{{/* Rankfile lines: local rank i of worker w is rank w*8+i, bound to the socket of GPU i's NIC. */}}
{{- define "kai-allreduce.rankfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "rank %d=kai-allreduce-1ecceb1-worker-%d.kai-allreduce-1ecceb1.training.svc slot=0:0-19" (add (mul $i 8) 0) $i }}
{{ printf "rank %d=kai-allreduce-1ecceb1-worker-%d.kai-allreduce-1ecceb1.training.svc slot=0:0-19" (add (mul $i 8) 1) $i }}
{{ printf "rank %d=kai-allreduce-1ecceb1-worker-%d.kai-allreduce-1ecceb1.training.svc slot=0:0-19" (add (mul $i 8) 2) $i }}
{{ printf "rank %d=kai-allreduce-1ecceb1-worker-%d.kai-allreduce-1ecceb1.training.svc slot=0:0-19" (add (mul $i 8) 3) $i }}
{{ printf "rank %d=kai-allreduce-1ecceb1-worker-%d.kai-allreduce-1ecceb1.training.svc slot=1:0-19" (add (mul $i 8) 4) $i }}
{{ printf "rank %d=kai-allreduce-1ecceb1-worker-%d.kai-allreduce-1ecceb1.training.svc slot=1:0-19" (add (mul $i 8) 5) $i }}
{{ printf "rank %d=kai-allreduce-1ecceb1-worker-%d.kai-allreduce-1ecceb1.training.svc slot=1:0-19" (add (mul $i 8) 6) $i }}
{{ printf "rank %d=kai-allreduce-1ecceb1-worker-%d.kai-allreduce-1ecceb1.training.svc slot=1:0-19" (add (mul $i 8) 7) $i }}
{{- end }}
{{- end }}
