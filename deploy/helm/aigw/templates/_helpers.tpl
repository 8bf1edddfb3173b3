{{/*
Helpers of the aigw chart. Component helpers take a dict:
  root      the top-level context ($)
  component the service name (users, relay, ...)
  values    the service's values block (.Values.<component>)
  readiness "grpc" (grpc.health.v1 on grpcPort) or "http" (GET /readyz on metricsPort, else httpPort)
*/}}

{{- define "aigw.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "aigw.fullname" -}}
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

{{- define "aigw.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Name of a component's Deployment and Service: <fullname>-<component>. */}}
{{- define "aigw.componentName" -}}
{{- printf "%s-%s" (include "aigw.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "aigw.commonLabels" -}}
helm.sh/chart: {{ include "aigw.chart" . }}
app.kubernetes.io/name: {{ include "aigw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: aigw
{{- end -}}

{{- define "aigw.labels" -}}
{{ include "aigw.commonLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "aigw.selectorLabels" -}}
app.kubernetes.io/name: {{ include "aigw.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "aigw.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "aigw.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* <registry>/<prefix><component>:<tag>, or the component's own image.repository / image.tag. */}}
{{- define "aigw.image" -}}
{{- $image := .root.Values.image -}}
{{- $repository := dig "image" "repository" "" .values | default (printf "%s%s" $image.prefix .component) -}}
{{- $tag := dig "image" "tag" "" .values | default $image.tag | default .root.Chart.AppVersion -}}
{{- if $image.registry -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $image.registry) $repository $tag -}}
{{- else -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}
{{- end -}}

{{/* Name of the Secret with SESSION_SECRET and CHANNEL_KEY_SECRET. */}}
{{- define "aigw.secretName" -}}
{{- default (include "aigw.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* Name of the Secret with the internal gRPC keys (<service>.key, <service>.pub). */}}
{{- define "aigw.grpcAuthSecretName" -}}
{{- .Values.grpcAuth.existingSecret | default (printf "%s-grpc-auth" (include "aigw.fullname" .) | trunc 63 | trimSuffix "-") -}}
{{- end -}}

{{/* The services that hold internal gRPC keys. */}}
{{- define "aigw.grpcAuthServices" -}}
gateway users channels billing relay logs tasks
{{- end -}}

{{/* Name of the chart's Secret with the infrastructure URLs (they may carry credentials). */}}
{{- define "aigw.infraSecretName" -}}
{{- printf "%s-infra" (include "aigw.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* MongoDB server URL (the database comes from MONGO_DB): the in-release server, or mongodb.url. */}}
{{- define "aigw.mongodbUrl" -}}
{{- if .Values.mongodb.enabled -}}
{{- printf "mongodb://%s:27017" (include "aigw.componentName" (dict "root" . "component" "mongodb")) -}}
{{- else -}}
{{- required "mongodb.url (or mongodb.existingSecret, or mongodb.enabled) is required" .Values.mongodb.url -}}
{{- end -}}
{{- end -}}

{{- define "aigw.kafkaBrokers" -}}
{{- if .Values.kafka.enabled -}}
{{- printf "%s:9092" (include "aigw.componentName" (dict "root" . "component" "kafka")) -}}
{{- else -}}
{{- required "kafka.brokers (or kafka.enabled) is required" .Values.kafka.brokers -}}
{{- end -}}
{{- end -}}

{{- define "aigw.redisUrl" -}}
{{- if .Values.redis.enabled -}}
{{- printf "redis://%s:6379" (include "aigw.componentName" (dict "root" . "component" "redis")) -}}
{{- else -}}
{{- required "redis.url (or redis.existingSecret, or redis.enabled) is required" .Values.redis.url -}}
{{- end -}}
{{- end -}}

{{/* gRPC address (host:port) of a component, for the *_ADDR variables. */}}
{{- define "aigw.grpcAddr" -}}
{{- $values := index .root.Values .component -}}
{{- printf "%s:%v" (include "aigw.componentName" .) $values.grpcPort -}}
{{- end -}}

{{/* Pod template annotations: config checksums (roll pods on change) and Prometheus discovery. */}}
{{- define "aigw.podAnnotations" -}}
checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
checksum/secret: {{ include (print .root.Template.BasePath "/secret.yaml") .root | sha256sum }}
{{- if .root.Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .values.metricsPort | default .values.httpPort | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- with .values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Pod-level settings shared by every service (everything in spec.template.spec but containers). */}}
{{- define "aigw.podSpec" -}}
{{- $root := .root -}}
serviceAccountName: {{ include "aigw.serviceAccountName" $root }}
automountServiceAccountToken: false
# Service links would add <SERVICE>_PORT-style variables to the environment; nothing reads them.
enableServiceLinks: false
terminationGracePeriodSeconds: {{ include "aigw.terminationGracePeriodSeconds" . }}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.values.nodeSelector | default $root.Values.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.values.tolerations | default $root.Values.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.values.affinity | default $root.Values.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $root.Values.topologySpread }}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "aigw.selectorLabels" . | nindent 8 }}
{{- end }}
volumes:
  # The root filesystem is read-only; Node and its libraries may still write temporary files.
  - name: tmp
    emptyDir: {}
  # Internal gRPC keys: every service's public key, and this service's private key only.
  - name: grpc-auth
    secret:
      secretName: {{ include "aigw.grpcAuthSecretName" $root }}
      defaultMode: 0440
      items:
        {{- range $svc := splitList " " (include "aigw.grpcAuthServices" $root) }}
        - key: {{ $svc }}.pub
          path: {{ $svc }}.pub
        {{- end }}
        - key: {{ .component }}.key
          path: {{ .component }}.key
{{- end -}}

{{/*
Grace period of a component's pods. The relay's follows its drain (relay.drainSeconds): the
preStop sleep, then the drain, then up to 20 s of usage flushing before its forced exit
(RELAY_FORCE_EXIT_MS), then 10 s more so that the kubelet never kills a pod that is still exiting.
*/}}
{{- define "aigw.terminationGracePeriodSeconds" -}}
{{- if eq .component "relay" -}}
{{- add (int .values.drainSeconds) (int .root.Values.shutdown.preStopSleepSeconds) 30 -}}
{{- else -}}
{{- .values.terminationGracePeriodSeconds | default .root.Values.shutdown.terminationGracePeriodSeconds -}}
{{- end -}}
{{- end -}}

{{/* Container ports: grpc (when the component has one) and http. */}}
{{- define "aigw.containerPorts" -}}
{{- if .values.grpcPort -}}
- name: grpc
  containerPort: {{ .values.grpcPort }}
  protocol: TCP
{{ end -}}
- name: http
  containerPort: {{ .values.httpPort }}
  protocol: TCP
{{- if .values.metricsPort }}
- name: metrics
  containerPort: {{ .values.metricsPort }}
  protocol: TCP
{{- end }}
{{- end -}}

{{/* Environment every service gets besides the shared ConfigMap. */}}
{{- define "aigw.env" -}}
{{- $root := .root -}}
- name: SERVICE_NAME
  value: {{ .component | quote }}
- name: HTTP_PORT
  value: {{ .values.httpPort | quote }}
{{- if .values.metricsPort }}
- name: METRICS_PORT
  value: {{ .values.metricsPort | quote }}
{{- end }}
{{- if .values.grpcPort }}
- name: GRPC_PORT
  value: {{ .values.grpcPort | quote }}
{{- end }}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: OTEL_RESOURCE_ATTRIBUTES
  value: "k8s.namespace.name=$(POD_NAMESPACE),k8s.pod.name=$(POD_NAME),service.version={{ $root.Chart.AppVersion }}"
# Internal gRPC keys (ADR 0006): <service>.pub of every service, <SERVICE_NAME>.key of this one.
- name: GRPC_AUTH_DIR
  value: {{ $root.Values.grpcAuth.mountPath | quote }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      {{- if $root.Values.redis.existingSecret }}
      name: {{ $root.Values.redis.existingSecret }}
      key: {{ $root.Values.redis.existingSecretKey }}
      {{- else }}
      name: {{ include "aigw.infraSecretName" $root }}
      key: REDIS_URL
      {{- end }}
{{- if .values.mongoDatabase }}
- name: MONGO_URL
  valueFrom:
    secretKeyRef:
      {{- if $root.Values.mongodb.existingSecret }}
      name: {{ $root.Values.mongodb.existingSecret }}
      key: {{ $root.Values.mongodb.existingSecretKey }}
      {{- else }}
      name: {{ include "aigw.infraSecretName" $root }}
      key: MONGO_URL
      {{- end }}
# The service's own database on the shared server.
- name: MONGO_DB
  value: {{ .values.mongoDatabase | quote }}
# The kind of server (MONGO_FLAVOR): MongoDB's indexes serve the plain queries.
- name: MONGO_FLAVOR
  value: {{ ternary "mongodb" ($root.Values.mongodb.flavor | default "mongodb") $root.Values.mongodb.enabled | quote }}
{{- end }}
{{- range $name, $value := .values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{/*
Probes. Liveness asks "is the process serving, and are its Kafka consumers not stuck" (GET
/healthz on the ops port where the service has one), so an outage of MongoDB, Kafka or Redis
takes pods out of load balancing (readiness) without restarting them all, while a consumer that
stopped consuming for the stall time plus the grace period gets its pod restarted.
*/}}
{{- define "aigw.probes" -}}
startupProbe:
  httpGet:
    path: /healthz
    port: http
  periodSeconds: 2
  failureThreshold: 30
livenessProbe:
  httpGet:
    path: /healthz
    port: {{ ternary "metrics" "http" (not (empty .values.metricsPort)) }}
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  {{- if eq .readiness "grpc" }}
  grpc:
    port: {{ .values.grpcPort }}
  {{- else }}
  httpGet:
    path: /readyz
    port: {{ ternary "metrics" "http" (not (empty .values.metricsPort)) }}
  {{- end }}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
{{- end -}}

{{/* Everything of the service's container but name, image and env-specific extras. */}}
{{- define "aigw.containerCommon" -}}
{{- $root := .root -}}
imagePullPolicy: {{ $root.Values.image.pullPolicy }}
{{- with .values.nodeFlags }}
# The image runs `node dist/main.js`; these Node flags go before the script (V8 flags such as
# --single-threaded-gc are not accepted in NODE_OPTIONS).
command: {{ concat (list "node") . (list "dist/main.js") | toJson }}
{{- end }}
ports:
  {{- include "aigw.containerPorts" . | nindent 2 }}
envFrom:
  - configMapRef:
      name: {{ include "aigw.fullname" $root }}
{{ include "aigw.probes" . }}
lifecycle:
  preStop:
    exec:
      # Keep serving while the endpoint removal propagates; SIGTERM (drain) comes after it.
      command: ["sleep", "{{ $root.Values.shutdown.preStopSleepSeconds }}"]
resources:
  {{- toYaml .values.resources | nindent 2 }}
securityContext:
  {{- toYaml $root.Values.containerSecurityContext | nindent 2 }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  - name: grpc-auth
    mountPath: {{ $root.Values.grpcAuth.mountPath }}
    readOnly: true
{{- end -}}

{{/* ClusterIP Service of a component, ports named like the container's. */}}
{{- define "aigw.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "aigw.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "aigw.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "aigw.selectorLabels" . | nindent 4 }}
  ports:
    {{- if .values.grpcPort }}
    - name: grpc
      port: {{ .values.grpcPort }}
      targetPort: grpc
      protocol: TCP
    {{- end }}
    - name: http
      port: {{ .values.httpPort }}
      targetPort: http
      protocol: TCP
    {{- if .values.metricsPort }}
    - name: metrics
      port: {{ .values.metricsPort }}
      targetPort: metrics
      protocol: TCP
    {{- end }}
{{- end -}}

{{/* PodDisruptionBudget of a component (values.pdb.maxUnavailable or values.pdb.minAvailable). */}}
{{- define "aigw.pdb" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "aigw.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "aigw.labels" . | nindent 4 }}
spec:
  {{- if .values.pdb.minAvailable }}
  minAvailable: {{ .values.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ .values.pdb.maxUnavailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "aigw.selectorLabels" . | nindent 6 }}
{{- end -}}


{{/* The relay's scaling behaviour (HPA and KEDA). Streams hold connections for minutes: scale up
fast, scale down slowly, one pod a minute (each leaving pod drains for up to relay.drainSeconds). */}}
{{- define "aigw.relayScalingBehavior" -}}
scaleUp:
  stabilizationWindowSeconds: 0
scaleDown:
  stabilizationWindowSeconds: 300
  policies:
    - type: Pods
      value: 1
      periodSeconds: 60
{{- end -}}
