{{/* Names, labels and the Secret names every template agrees on. */}}

{{- define "benchfleet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "benchfleet.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "benchfleet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "benchfleet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "benchfleet.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "benchfleet.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "benchfleet.coordinator.name" -}}
{{- printf "%s-coordinator" (include "benchfleet.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "benchfleet.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) -}}
{{- end -}}

{{/* The Secret holding ca.pem, server.pem, server-key.pem, ca-key.pem. */}}
{{- define "benchfleet.tlsSecret" -}}
{{- if .Values.tls.existingSecret -}}
{{- .Values.tls.existingSecret -}}
{{- else -}}
{{- printf "%s-tls" (include "benchfleet.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "benchfleet.operatorTokenSecret" -}}
{{- if .Values.operatorToken.existingSecret -}}
{{- .Values.operatorToken.existingSecret -}}
{{- else -}}
{{- printf "%s-operator-token" (include "benchfleet.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "benchfleet.enrollTokenSecret" -}}
{{- if .Values.agents.enrollToken.value -}}
{{- printf "%s-enroll-token" (include "benchfleet.fullname" .) -}}
{{- else -}}
{{- .Values.agents.enrollToken.existingSecret -}}
{{- end -}}
{{- end -}}

{{- define "benchfleet.postgresql.name" -}}
{{- printf "%s-postgresql" (include "benchfleet.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Secret and key holding the database URL. */}}
{{- define "benchfleet.databaseSecret" -}}
{{- if .Values.postgresql.enabled -}}
{{- include "benchfleet.postgresql.name" . -}}
{{- else -}}
{{- required "database.existingSecret is required when postgresql.enabled is false" .Values.database.existingSecret -}}
{{- end -}}
{{- end -}}

{{- define "benchfleet.databaseSecretKey" -}}
{{- if .Values.postgresql.enabled -}}url{{- else -}}{{ .Values.database.existingSecretKey }}{{- end -}}
{{- end -}}

{{- define "benchfleet.coordinatorAddress" -}}
{{- if .Values.agents.coordinatorAddress -}}
{{- .Values.agents.coordinatorAddress -}}
{{- else -}}
{{- printf "%s.%s.svc:%d" (include "benchfleet.coordinator.name" .) .Release.Namespace (int .Values.coordinator.grpcPort) -}}
{{- end -}}
{{- end -}}

{{/* A container's securityContext: non-root, read-only root, no capabilities. */}}
{{- define "benchfleet.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* A random token: prefix + 43 base64url characters, kept from the live Secret on upgrade. */}}
{{- define "benchfleet.keptOrRandom" -}}
{{- $existing := lookup "v1" "Secret" .namespace .secret -}}
{{- if and $existing (index ($existing.data | default dict) .key) -}}
{{- index $existing.data .key | b64dec -}}
{{- else -}}
{{- printf "%s%s" .prefix (randAlphaNum 43) -}}
{{- end -}}
{{- end -}}
