{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "accept-dgx-all-reduce-pair.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Standard labels of every object of this chart. */}}
{{- define "accept-dgx-all-reduce-pair.labels" -}}
helm.sh/chart: {{ include "accept-dgx-all-reduce-pair.chart" . | quote }}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}

{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}
{{- define "accept-dgx-all-reduce-pair.hostfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "accept-dgx-all-reduce-pair-worker-%d.accept-dgx-all-reduce-pair.roce-training.svc slots=8" $i }}
{{- end }}
{{- end }}

{{/* Rankfile lines: local rank i of worker w is rank w*8+i, bound to the socket of GPU i's NIC. */}}
{{- define "accept-dgx-all-reduce-pair.rankfile" -}}
{{- range $i := until (int .Values.workers) }}
{{ printf "rank %d=accept-dgx-all-reduce-pair-worker-%d.accept-dgx-all-reduce-pair.roce-training.svc slot=0:0-19" (add (mul $i 8) 0) $i }}
{{ printf "rank %d=accept-dgx-all-reduce-pair-worker-%d.accept-dgx-all-reduce-pair.roce-training.svc slot=0:0-19" (add (mul $i 8) 1) $i }}
{{ printf "rank %d=accept-dgx-all-reduce-pair-worker-%d.accept-dgx-all-reduce-pair.roce-training.svc slot=0:0-19" (add (mul $i 8) 2) $i }}
{{ printf "rank %d=accept-dgx-all-reduce-pair-worker-%d.accept-dgx-all-reduce-pair.roce-training.svc slot=0:0-19" (add (mul $i 8) 3) $i }}
{{ printf "rank %d=accept-dgx-all-reduce-pair-worker-%d.accept-dgx-all-reduce-pair.roce-training.svc slot=1:0-19" (add (mul $i 8) 4) $i }}
{{ printf "rank %d=accept-dgx-all-reduce-pair-worker-%d.accept-dgx-all-reduce-pair.roce-training.svc slot=1:0-19" (add (mul $i 8) 5) $i }}
{{ printf "rank %d=accept-dgx-all-reduce-pair-worker-%d.accept-dgx-all-reduce-pair.roce-training.svc slot=1:0-19" (add (mul $i 8) 6) $i }}
{{ printf "rank %d=accept-dgx-all-reduce-pair-worker-%d.accept-dgx-all-reduce-pair.roce-training.svc slot=1:0-19" (add (mul $i 8) 7) $i }}
{{- end }}
{{- end }}
