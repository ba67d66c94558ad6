#!/usr/bin/env bash
# Serve a classroom: N replicas of the app (app.py, as run.sh starts it) behind HAProxy, each
# browser pinned to one replica, replicas restarted when they die.
# Usage: ./serve.sh [--replicas N] [--port P] [--bind ADDR]
#   N     replicas, each its own `streamlit run app.py` process (default: the number of cores,
#         `nproc`; each takes about 0.5-0.7 GB resident and one core while it computes)
#   P     the port browsers open (default 8501); the replicas listen on 127.0.0.1 at P+1..P+N
#         (a free port instead when one of those is taken)
#   ADDR  the address HAProxy listens on (default 127.0.0.1: this machine only). Binding
#         elsewhere (e.g. --bind 0.0.0.0 for a classroom's network) is your explicit choice: the
#         app then answers anyone who can reach that address, over plain HTTP.
# HAProxy (Debian's package; installed here when missing, as test.sh installs Chromium) balances
# round-robin and pins each browser to one replica with its own cookie (SRV): Streamlit keeps a
# session's state in the memory of the process its websocket talks to. Health checks hit
# /_stcore/health every second (each waits up to 5 s, since a busy replica is slow, not dead); a
# replica that fails two is taken out, its websockets closed, and a browser pinned to it
# reconnects to another one (in about a second, measured), where its next action redraws the page
# from its URL. A replica that exits is started again on the same port (after 1 s, longer while
# it keeps failing at once). A replica stuck while running (its health check answers 503 when its
# forward passes cannot go on: server/health.py) is stopped after 3 failed checks in a row, 1 s
# apart (or after 30 s without any answer), and started again the same way.
# HAProxy also logs no query strings (a link's s= is the visitor's sentence), caps each replica's
# connections, limits each client address (connections, requests per 10 s: 429 past them) and
# refuses a body over the upload cap (413) or without a length (411) before a replica reads it.
# Runs in the foreground; every process logs into one folder (printed at start, kept after exit):
# supervisor.log, haproxy.log (one line per request), replica-<i>.log, and haproxy.cfg. Ctrl-C or
# SIGTERM stops exactly the processes this script started.
set -euo pipefail
cd "$(dirname "$0")"

usage() { sed -n '4,11s/^# \{0,1\}//p' "$0"; }
replicas=$(nproc) port=8501 bind=127.0.0.1
while [ $# -gt 0 ]; do
  case "$1" in
    --replicas) replicas="${2:?--replicas needs a number}"; shift 2 ;;
    --port) port="${2:?--port needs a number}"; shift 2 ;;
    --bind) bind="${2:?--bind needs an address}"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "serve.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ $replicas =~ ^[1-9][0-9]{0,2}$ ]] || { echo "serve.sh: --replicas must be 1..999" >&2; exit 2; }
[[ $port =~ ^[1-9][0-9]{0,4}$ ]] && ((port + replicas <= 65535)) ||
  { echo "serve.sh: --port must leave room for P+N <= 65535" >&2; exit 2; }

export PATH="$PATH:/usr/sbin"  # where Debian puts haproxy, off a normal user's PATH
if ! command -v haproxy >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "serve.sh: installing Debian's haproxy (once)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy) >/dev/null
  else
    echo "serve.sh: haproxy is missing; install it (Debian: sudo apt-get install haproxy)" >&2
    exit 1
  fi
fi

source scripts/env.sh requirements.txt  # the same environment as run.sh
# One cookie secret for every replica of this run, so a cookie one replica signed (XSRF) is
# valid on the others after a failover. From the environment, never the command line (ps).
secret=$(head -c 24 /dev/urandom | base64)
export STREAMLIT_SERVER_COOKIE_SECRET="${STREAMLIT_SERVER_COOKIE_SECRET:-$secret}"

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/attention-serve-$$-XXXX")
now_ms() { local t=${EPOCHREALTIME//[.,]/}; echo $((t / 1000)); }
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }  # milliseconds -> "12.3"
say() { printf '[serve %(%H:%M:%S)T] %s\n' -1 "$*" | tee -a "$run_dir/supervisor.log"; }
t0=$(now_ms)

listening() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
checked="" why=""  # the last health check: its status ("000": no answer in 2 s) and reason
check() {  # ask the replica on 127.0.0.1:$1 for its health (/_stcore/health): sets checked, why
  local reply
  reply=$(timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
    printf "GET /_stcore/health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3; head -c 1024 <&3' \
    "$1" 2>/dev/null) || reply=""
  checked=000 why="no answer within 2 s"
  [[ $reply =~ ^HTTP/1\.[01]\ ([0-9]{3}) ]] && checked=${BASH_REMATCH[1]} why="status $checked"
  [[ $reply =~ \"reason\":\ \"([^\"]*)\" ]] && why=${BASH_REMATCH[1]}  # a stuck replica says why
  return 0
}
healthy() { check "$1" && [[ $checked == 200 ]]; }
ours() {  # $1 is a live (not zombie) child of this script: never signal anyone else's process
  local stat state ppid
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  read -r state ppid _ <<<"${stat##*) }"
  [[ $ppid == "$$" && $state != Z ]]
}

if listening "$bind" "$port"; then
  echo "serve.sh: something already listens on $bind:$port (choose another --port)" >&2
  exit 1
fi
avail_mb=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
((replicas * 700 <= avail_mb)) ||
  say "warning: $replicas replicas need about $((replicas * 700)) MB, $avail_mb MB available"

declare -a rpid rport rstart rhealthy rdelay rdue rbad rsince rquiet
# A replica that was healthy is stopped after UNHEALTHY_CHECKS failed checks in a row: answers
# other than 200 (a stuck replica's 503), or no answer, then only once the failures have lasted
# SILENT_MS (a replica busy with a class is slow to answer, not stuck: HAProxy waits 5 s too).
UNHEALTHY_CHECKS=3 SILENT_MS=30000 TERM_MS=5000
for ((i = 1; i <= replicas; i++)); do
  p=$((port + i))
  if listening 127.0.0.1 "$p"; then
    p=$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
  fi
  rport[i]=$p rdelay[i]=0 rdue[i]=0
done

# HAProxy's limits (docs/SERVING.md says why these numbers): connections per replica, and per
# client address connections at once and requests per 10 s (the variables raise them for a
# bigger school behind one address; a test lowers the rate to reach it)
server_conns=${ATTENTION_SERVE_SERVER_CONNS:-300}
client_conns=${ATTENTION_SERVE_CLIENT_CONNS:-500}
client_rate=${ATTENTION_SERVE_CLIENT_RATE:-10000}
for n in "$server_conns" "$client_conns" "$client_rate"; do
  [[ $n =~ ^[1-9][0-9]{0,6}$ ]] || { echo "serve.sh: a limit must be 1..9999999" >&2; exit 2; }
done
# The body cap: Streamlit's upload cap (.streamlit/config.toml's maxUploadSize in MB, or the
# variable that overrides it; Streamlit's default 200) plus the 2 MB of multipart framing that
# server/guard.py allows, so that HAProxy and the replica refuse the same bodies.
upload_mb=${STREAMLIT_SERVER_MAX_UPLOAD_SIZE:-$(sed -n 's/^maxUploadSize *= *\([0-9]*\).*/\1/p' \
  .streamlit/config.toml)}
upload_mb=${upload_mb:-200}
[[ $upload_mb =~ ^[1-9][0-9]{0,5}$ ]] || { echo "serve.sh: bad maxUploadSize" >&2; exit 2; }
body_mb=$((upload_mb + 2))
body_cap=$((body_mb * 1048576))
# What HAProxy answers past them (plain words: a visitor may read them)
too_many_conns="Too many connections from your address at once; close some pages and try again."
too_many_requests="Too many requests from your address; wait ten seconds and try again."
too_big="Request body too large: at most $body_mb MB."
no_length="Send the request body with a Content-Length."
# HAProxy's httplog fields, but the request's path alone (%HPO), never its query string
log_format="%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq"
log_format+=" %HM %HPO"

cfg="$run_dir/haproxy.cfg"
{
  cat <<EOF
# Generated by serve.sh for this run only.
global
    log stdout format raw local0 info
    maxconn 4096
    stats socket $run_dir/haproxy.sock mode 600 level user

defaults
    mode http
    log global
    # no query string: a link carries the visitor's sentence (s=...)
    log-format "$log_format"
    option dontlognull
    option redispatch 1
    retries 2
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    timeout http-keep-alive 10s
    timeout queue 30s
    timeout client-fin 10s
    timeout server-fin 10s
    # an open websocket (a page left open through a lesson) may be quiet for a long time
    timeout tunnel 1h

# Streamlit's page files (/static/: content-hashed JavaScript, styles and fonts, marked immutable)
# kept by HAProxy once a replica has sent them: a first visit asks for ~106 of them, which cost a
# replica ~75 ms of CPU per arrival to send even from memory (python -m bench arrivals). Gzipped
# and plain copies are kept apart (process-vary); a response that sets a cookie is never kept.
cache static_files
    total-max-size 64
    max-object-size 8388608
    max-age 31536000
    process-vary on

frontend classroom
    bind $bind:$port
    # Per client address: connections open at once and requests per 10 s, each answered 429
    # past its limit. A class behind one address (a school's NAT) must fit: a page holds a
    # websocket and, while it loads, up to 6 more connections (Chromium's cap per host); a
    # first visit makes ~110 requests (91 of them script chunks). $client_conns connections and
    # $client_rate requests per 10 s leave room for a class of 60 arriving within 10 s
    # (tests/serve/test_classroom.py: 34 from 127.0.0.1).
    stick-table type ip size 100k expire 60s store conn_cur,http_req_rate(10s)
    tcp-request connection track-sc0 src
    acl too_many_conns sc_conn_cur(0) gt $client_conns
    acl too_many_requests sc_http_req_rate(0) gt $client_rate
    http-request deny status 429 content-type text/plain string "$too_many_conns" if too_many_conns
    http-request deny status 429 content-type text/plain string "$too_many_requests" \
      if too_many_requests
    # Bodies: the uploader's cap (Streamlit's maxUploadSize, $upload_mb MB) plus multipart
    # framing, as server/guard.py counts it; refused before a replica reads a byte. A body
    # without a length (chunked) cannot be judged before it is read: no page sends one.
    acl too_big req.hdr_val(content-length) gt $body_cap
    acl chunked req.hdr(transfer-encoding) -m found
    http-request deny status 413 content-type text/plain string "$too_big" if too_big
    http-request deny status 411 content-type text/plain string "$no_length" if chunked
    default_backend replicas

backend replicas
    balance roundrobin
    cookie SRV insert indirect nocache httponly attr "SameSite=Lax"
    option httpchk GET /_stcore/health
    http-check expect status 200
    # A busy replica is slow, not dead: with the default (a check times out after "inter", 1 s),
    # a class's first page loads made a replica miss two checks, and HAProxy re-pinned its
    # browsers' HTTP requests (uploads, blocks) to the other replica while their websockets
    # stayed, so an upload reached a replica that had no such session (400). A crashed replica
    # refuses connections at once and is still taken out after two checks (2 s).
    timeout check 5s
    # a GET caught by a replica's crash (accepted, then dropped unanswered) goes to another one
    retry-on conn-failure empty-response
    http-request disable-l7-retry unless METH_GET
    http-request set-var(txn.static) bool(true) if METH_GET { path_beg /static/ }
    http-request cache-use static_files if { var(txn.static) -m bool }
    http-response cache-store static_files if { var(txn.static) -m bool }
    # Each replica takes at most $server_conns connections at once (more wait in HAProxy's queue,
    # up to "timeout queue"): every open page holds one (its websocket), and a replica serves
    # ~100 students exploring per core (docs/SERVING.md), so a flood cannot pile onto it.
EOF
  for ((i = 1; i <= replicas; i++)); do
    # on-marked-down: a replica taken out also closes its websockets, so each of its pages
    # reconnects through the balancer and moves whole (socket and HTTP) to one live replica
    echo "    server r$i 127.0.0.1:${rport[i]} cookie r$i check inter 1s fall 2 rise 1" \
      "on-marked-down shutdown-sessions maxconn $server_conns"
  done
} >"$cfg"
haproxy -c -q -f "$cfg" || { echo "serve.sh: invalid HAProxy config $cfg" >&2; exit 1; }

start_replica() {
  echo "----- $(date -Is) starting on port ${rport[$1]}" >>"$run_dir/replica-$1.log"
  .venv/bin/python -m streamlit run app.py --server.headless true \
    --browser.gatherUsageStats false --server.address 127.0.0.1 --server.port "${rport[$1]}" \
    </dev/null >>"$run_dir/replica-$1.log" 2>&1 &
  rpid[$1]=$! rstart[$1]=$(now_ms) rhealthy[$1]=0 rbad[$1]=0
  say "replica $1 started: pid ${rpid[$1]}, port ${rport[$1]}"
}

replace() {  # stop replica $1, our child, by its pid: SIGTERM, then SIGKILL after TERM_MS
  local pid=${rpid[$1]} t
  ours "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((t = 0; t < TERM_MS / 100; t++)); do
    ours "$pid" || return 0
    sleep 0.1
  done
  say "replica $1 (pid $pid) still running $((TERM_MS / 1000)) s after SIGTERM, killing it"
  kill -KILL "$pid" 2>/dev/null || true
}

watch() {  # check healthy replica $1 again; stop it after UNHEALTHY_CHECKS failures in a row
  local i=$1 now
  check "${rport[i]}"
  if [[ $checked == 200 ]]; then
    if ((rbad[i])); then say "replica $i healthy again after ${rbad[i]} failed checks"; fi
    rbad[i]=0
    return 0
  fi
  now=$(now_ms)
  if ((rbad[i] == 0)); then
    rsince[i]=$now rquiet[i]=0
    say "replica $i (pid ${rpid[i]}) failed its health check: $why"
  fi
  rbad[i]=$((rbad[i] + 1))
  if [[ $checked == 000 ]]; then rquiet[i]=1; fi
  if ((rbad[i] >= UNHEALTHY_CHECKS && (!rquiet[i] || now - rsince[i] >= SILENT_MS))); then
    say "replica $i (pid ${rpid[i]}) failed ${rbad[i]} health checks in a row over" \
      "$(secs $((now - rsince[i]))) s ($why); stopping it"
    replace "$i"
  fi
  return 0
}

haproxy_pid="" nap_pid="" stopping=0
stop() {  # stop what this script started: SIGTERM, up to 10 s, then SIGKILL; wait for each
  local pids=() left=() p t
  ((stopping)) && return
  stopping=1
  for p in "$haproxy_pid" "${rpid[@]}" "$nap_pid"; do
    [ -n "$p" ] && ours "$p" && pids+=("$p")
  done
  say "stopping ${#pids[@]} processes: ${pids[*]}"
  ((${#pids[@]})) && kill -TERM "${pids[@]}" 2>/dev/null || true
  for ((t = 0; t < 100; t++)); do
    left=()
    for p in "${pids[@]}"; do ours "$p" && left+=("$p"); done
    ((${#left[@]})) || break
    sleep 0.1
  done
  if ((${#left[@]})); then
    say "still running after 10 s, killing: ${left[*]}"
    kill -KILL "${left[@]}" 2>/dev/null || true
  fi
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  say "stopped; logs kept in $run_dir"
}
trap 'stop; exit 0' INT TERM
trap 'stop' EXIT

say "logs and config: $run_dir"
# The models' float32 weights written once to this machine's shared cache (a first run: a few
# seconds) before the replicas start, so that they all map the same file instead of each holding
# its own copy (attention_core/models/shared_weights.py; ATTENTION_WEIGHT_CACHE=off: no cache).
timeout 300 .venv/bin/python -c 'from attention_core.models import load_model as m
for k in ("minilm", "smollm2", "whisper"):
    try: m(k)
    except Exception as e: print(f"weight cache: {k} not cached ({e})")' || true
for ((i = 1; i <= replicas; i++)); do start_replica "$i"; done
haproxy -db -f "$cfg" </dev/null >>"$run_dir/haproxy.log" 2>&1 &
haproxy_pid=$!
say "haproxy $(haproxy -v | awk 'NR == 1 {print $3}') started: pid $haproxy_pid, http://$bind:$port"

ready=0 tick=0.25  # seconds between looks: closer while starting up, then 1
while true; do
  sleep "$tick" &
  nap_pid=$!
  wait "$nap_pid" || true
  nap_pid=""
  if ! ours "$haproxy_pid"; then
    set +e; wait "$haproxy_pid"; rc=$?; set -e
    say "haproxy exited ($rc); its last lines:"
    tail -n 5 "$run_dir/haproxy.log" | tee -a "$run_dir/supervisor.log"
    exit 1
  fi
  up=0 now=$(now_ms)
  for ((i = 1; i <= replicas; i++)); do
    if [ -z "${rpid[i]}" ]; then
      ((now >= rdue[i])) && start_replica "$i"
      continue
    fi
    if ! ours "${rpid[i]}"; then
      set +e; wait "${rpid[i]}"; rc=$?; set -e
      ran=$((now - rstart[i]))
      # quick deaths in a row (a taken port, a broken install): wait longer each time, up to 30 s
      if ((ran >= 30000 || rdelay[i] == 0)); then
        rdelay[i]=1
      else
        rdelay[i]=$((rdelay[i] * 2 > 30 ? 30 : rdelay[i] * 2))
      fi
      say "replica $i (pid ${rpid[i]}) exited with $rc after $(secs "$ran") s;" \
        "restart in ${rdelay[i]} s"
      rpid[i]="" rdue[i]=$((now + rdelay[i] * 1000 - 1000))  # the next look is a second away
      continue
    fi
    if ((rhealthy[i])); then
      watch "$i"  # stuck while running: stopped here, started again by the branch above
    elif healthy "${rport[i]}"; then
      rhealthy[i]=1
      say "replica $i healthy $(secs $(($(now_ms) - rstart[i]))) s after its start" \
        "(pid ${rpid[i]}, port ${rport[i]})"
    fi
    ((rhealthy[i])) && up=$((up + 1))
  done
  if ((!ready && up == replicas)); then
    ready=1 tick=1
    say "ready: $replicas/$replicas replicas healthy $(secs $(($(now_ms) - t0))) s after start;" \
      "open http://$bind:$port"
  fi
done
