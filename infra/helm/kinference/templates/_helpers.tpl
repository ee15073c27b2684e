{{/* Names: the release name, suffixed with the chart's unless it already contains it. */}}
{{- define "kinference.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kinference.controllerName" -}}{{ include "kinference.fullname" . }}-controller{{- end -}}
{{- define "kinference.scorerName" -}}{{ include "kinference.fullname" . }}-scorer{{- end -}}
{{- define "kinference.edgeName" -}}{{ include "kinference.fullname" . }}-edge{{- end -}}
{{- define "kinference.eppTlsSecretName" -}}
{{- .Values.scorer.epp.tls.existingSecret | default (printf "%s-epp-tls" (include "kinference.scorerName" .)) -}}
{{- end -}}
{{/* Where the scorer's EPP reads its certificate and key (kinfctl scorer --epp-tls-*). */}}
{{- define "kinference.eppTlsDir" -}}/etc/kinference/epp-tls{{- end -}}
{{/*
The scorer's API inside the cluster, as the in-cluster edge calls it: the Service's name
in the release namespace, which the pods' DNS search path completes (any cluster domain).
*/}}
{{- define "kinference.scorerUrl" -}}
http://{{ include "kinference.scorerName" . }}.{{ .Release.Namespace }}.svc:{{ .Values.scorer.service.port }}
{{- end -}}
{{- define "kinference.vllmNamespace" -}}{{ .Values.vllm.namespace | default .Release.Namespace }}{{- end -}}

{{/* Selector labels of one component (controller or scorer): stable across upgrades. */}}
{{- define "kinference.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "kinference.labels" -}}
{{ include "kinference.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "kinference.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{/* The pod and container security settings every Kinference pod runs with. */}}
{{- define "kinference.podSecurityContext" -}}
runAsNonRoot: true
# The node:24 image's unprivileged "node" user (Dockerfile USER).
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "kinference.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
privileged: false
capabilities:
  drop: [ALL]
{{- end -}}

{{/* A container environment variable read from a referenced Secret. */}}
{{- define "kinference.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.name }}
      key: {{ .ref.key }}
{{- end -}}

{{- define "kinference.podIdentityEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end -}}

{{/*
Where one scorer.tokenizers entry is mounted: its mountPath, or /tokenizers/<name>, the path
a pool's `tokenizer` then names (docs/deploy.md).
*/}}
{{- define "kinference.tokenizerMountPath" -}}
{{ .mountPath | default (printf "/tokenizers/%s" .name) }}
{{- end -}}

{{/*
What the schema cannot say about scorer.tokenizers: names (hence volume names) and mount
paths unique, and no mount over the scorer's /tmp or inside another tokenizer's directory.
*/}}
{{- define "kinference.checkTokenizers" -}}
{{- $names := dict -}}
{{- $paths := list -}}
{{- range . -}}
{{- if hasKey $names .name -}}
{{- fail (printf "scorer.tokenizers: the name %q appears twice (names name the volumes)" .name) -}}
{{- end -}}
{{- $_ := set $names .name true -}}
{{- $path := include "kinference.tokenizerMountPath" . | trimSuffix "/" -}}
{{- $tmp := "/tmp" -}}
{{- if or (eq $path $tmp) (hasPrefix (printf "%s/" $tmp) $path) -}}
{{- fail (printf "scorer.tokenizers: %q mounts at %s, inside the scorer's /tmp emptyDir" .name $path) -}}
{{- end -}}
{{- range $paths -}}
{{- if or (eq . $path) (hasPrefix (printf "%s/" .) $path) (hasPrefix (printf "%s/" $path) .) -}}
{{- fail (printf "scorer.tokenizers: the mount paths %s and %s overlap" . $path) -}}
{{- end -}}
{{- end -}}
{{- $paths = append $paths $path -}}
{{- end -}}
{{- end -}}

{{/*
The NetworkPolicy ports of vLLM's KV-event PUB and replay ROUTER sockets: one port each, or
with vllm.dataParallelSize ranks the range each rank's socket takes (port + rank).
*/}}
{{- define "kinference.vllmZmqPorts" -}}
{{- $last := sub (int .dataParallelSize) 1 -}}
{{- range list .kvEventsPort .replayPort }}
- { protocol: TCP, port: {{ . }}{{ if gt $last 0 }}, endPort: {{ add . $last }}{{ end }} }
{{- end }}
{{- end -}}

{{/*
vLLM's ports do not collide: each of the dataParallelSize ranks binds kvEventsPort + rank
and replayPort + rank, so those ranges must be apart and leave out the HTTP port.
*/}}
{{- define "kinference.checkVllmPorts" -}}
{{- $n := int .dataParallelSize -}}
{{- $events := int .kvEventsPort -}}
{{- $replay := int .replayPort -}}
{{- $http := int .httpPort -}}
{{- $eventsLast := add $events (sub $n 1) -}}
{{- $replayLast := add $replay (sub $n 1) -}}
{{- if and (le $events $replayLast) (le $replay $eventsLast) -}}
{{- fail (printf "vllm.kvEventsPort (%d) and vllm.replayPort (%d) overlap across %d data-parallel ranks: rank r binds each port + r, so the two must be at least vllm.dataParallelSize apart" $events $replay $n) -}}
{{- end -}}
{{- if or (and (le $events $http) (le $http $eventsLast)) (and (le $replay $http) (le $http $replayLast)) -}}
{{- fail (printf "vllm.httpPort (%d) is among the KV-event and replay ports of the %d data-parallel ranks (%d-%d, %d-%d)" $http $n $events $eventsLast $replay $replayLast) -}}
{{- end -}}
{{- end -}}

{{- /*
A workload's pod template metadata: the chart's labels, the workload's podLabels (one that
would redefine a chart label fails the render: the selectors read them), its podAnnotations.
Called with dict "ctx" (the labels' context) "values" (the workload's values) "component".
*/ -}}
{{- define "kinference.podMetadata" -}}
{{- $labels := fromYaml (include "kinference.labels" .ctx) -}}
{{- range $key, $value := .values.podLabels }}
{{- if hasKey $labels $key }}
{{- fail (printf "%s.podLabels.%s: the chart sets this label itself (its selectors read it)" $.component $key) }}
{{- end }}
{{- end -}}
labels:
  {{- toYaml (merge (deepCopy .values.podLabels) $labels) | nindent 2 }}
{{- with .values.podAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}


{{- /*
A workload's scheduling fields (nodeSelector, tolerations, affinity), each only when set;
called with the workload's values.
*/ -}}
{{- define "kinference.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- /*
Ports of one workload that must differ (a list of dict "name" "port"): two equal fail the
render, naming both values.
*/ -}}
{{- define "kinference.checkDistinctPorts" -}}
{{- $seen := dict -}}
{{- range . -}}
{{- $key := toString .port -}}
{{- if hasKey $seen $key -}}
{{- fail (printf "%s (%v) must differ from %s: each is a listener of its own" .name .port (get $seen $key)) -}}
{{- end -}}
{{- $_ := set $seen $key .name -}}
{{- end -}}
{{- end -}}

{{- /*
KINFERENCE_LOG_LEVEL of one component (dict "root" "values"): its own logLevel, else
observability.logLevel. Every entry point reads it (control-plane/logging/log-level-env.ts).
*/ -}}
{{- define "kinference.logLevelEnv" -}}
- name: KINFERENCE_LOG_LEVEL
  value: {{ .values.logLevel | default .root.Values.observability.logLevel | quote }}
{{- end -}}

{{- /*
The standard OTEL_* variables of a traced component (the edge, the scorer), called with
dict "root" "name" (its Deployment's name); nothing while observability.tracing.otlpEndpoint
is empty, which the services read as tracing off (control-plane/tracing/otel-env.ts). The
headers come from a Secret, never from the values. The pod's name and namespace are
variables of their own first, for OTEL_RESOURCE_ATTRIBUTES to expand them ($(VAR) sees the
variables defined above it); the user's attributes come last, where a key overrides ours.
*/ -}}
{{- define "kinference.tracingEnv" -}}
{{- $t := .root.Values.observability.tracing -}}
{{- if $t.otlpEndpoint }}
{{- include "kinference.podIdentityEnv" .root | nindent 0 }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $t.otlpEndpoint | quote }}
{{- with $t.headersSecret }}
{{- include "kinference.secretEnv" (dict "env" "OTEL_EXPORTER_OTLP_HEADERS" "ref" (dict "name" . "key" "headers")) | nindent 0 }}
{{- end }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $t.sampler | quote }}
{{- if ne (toString $t.samplerArg) "" }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ toString $t.samplerArg | quote }}
{{- end }}
{{- $attributes := list "k8s.namespace.name=$(POD_NAMESPACE)" "k8s.pod.name=$(POD_NAME)" (printf "k8s.deployment.name=%s" .name) }}
{{- with $t.resourceAttributes }}
{{- $attributes = append $attributes . }}
{{- end }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ join "," $attributes | quote }}
{{- end }}
{{- end -}}

{{- /*
The port the scorer's spans leave on, for its NetworkPolicy: the port of
observability.tracing.otlpEndpoint's URL, else the scheme's (80, 443).
*/ -}}
{{- define "kinference.otlpPort" -}}
{{- $url := urlParse .Values.observability.tracing.otlpEndpoint -}}
{{- $port := regexFind ":[0-9]+$" $url.host | trimPrefix ":" -}}
{{- $port | default (eq $url.scheme "https" | ternary "443" "80") -}}
{{- end -}}
