{{/* Names and labels shared by every template. */}}
{{- define "agent-judge.fullname" -}}
{{- printf "%s-agent-judge" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "agent-judge.labels" -}}
app.kubernetes.io/name: agent-judge
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one role: (dict "root" $ "role" "judge"). */}}
{{- define "agent-judge.selector" -}}
app.kubernetes.io/name: agent-judge
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "agent-judge.image" -}}
image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
imagePullPolicy: {{ .Values.image.pullPolicy }}
{{- end -}}

{{/* What every container runs with: Temporal, the policy from the ConfigMap, JSON logs. */}}
{{- define "agent-judge.env" -}}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: AGENT_JUDGE_POLICY
  value: /etc/agent-judge/policy.yaml
- name: LOG_FORMAT
  value: json
{{- end -}}

{{- define "agent-judge.securityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 1000
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
{{- end -}}

{{/* Mounts every container has: the policy (read-only), a writable .agent-judge for local state, /tmp. */}}
{{- define "agent-judge.mounts" -}}
- name: agent-judge-policy
  mountPath: /etc/agent-judge
  readOnly: true
- name: agent-judge-state
  mountPath: /app/.agent-judge
- name: agent-judge-tmp
  mountPath: /tmp
{{- end -}}

{{- define "agent-judge.volumes" -}}
- name: agent-judge-policy
  configMap:
    name: {{ include "agent-judge.fullname" . }}-policy
- name: agent-judge-state
  emptyDir: {}
- name: agent-judge-tmp
  emptyDir: {}
{{- end -}}

{{- define "agent-judge.metricsPort" -}}
ports:
  - name: metrics
    containerPort: {{ .Values.metrics.port }}
{{- end -}}

{{/*
The judge container: the same in the judge Deployment and in the sidecar snippet. Model credentials come from
secrets.judge only; nothing of secrets.workers is referenced.
*/}}
{{- define "agent-judge.judgeContainer" -}}
name: agent-judge-judge
{{ include "agent-judge.image" . }}
args: ["worker", "--role", "judge", "--metrics", "0.0.0.0:{{ .Values.metrics.port }}"]
env:
  {{- include "agent-judge.env" . | nindent 2 }}
  - name: OLLAMA_HOST
    value: {{ .Values.judge.model.ollamaHost | quote }}
  {{- if .Values.judge.model.name }}
  - name: AGENT_JUDGE_MODEL
    value: {{ .Values.judge.model.name | quote }}
  {{- end }}
  - name: OLLAMA_API_KEY
    valueFrom:
      secretKeyRef: { name: {{ .Values.secrets.judge }}, key: ollama-api-key, optional: true }
  - name: OPENAI_API_KEY
    valueFrom:
      secretKeyRef: { name: {{ .Values.secrets.judge }}, key: openai-api-key, optional: true }
{{ include "agent-judge.metricsPort" . }}
{{ include "agent-judge.securityContext" . }}
resources:
  {{- toYaml .Values.judge.resources | nindent 2 }}
volumeMounts:
  {{- include "agent-judge.mounts" . | nindent 2 }}
{{- end -}}

{{/* Pod-level settings every role shares: its own service account without an API token. */}}
{{- define "agent-judge.podCommon" -}}
serviceAccountName: {{ include "agent-judge.fullname" .root }}-{{ .role }}
automountServiceAccountToken: false
securityContext:
  fsGroup: 1000
  seccompProfile:
    type: RuntimeDefault
{{- end -}}
