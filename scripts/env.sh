# The one environment of run, test, serve and bench: source it from the repository's root with
# the requirements file the command needs, e.g. `source scripts/env.sh requirements.txt`.
# It installs that file's lock (requirements.lock for requirements.txt) into .venv with hashes
# checked (first time, and again only when a requirements file or lock changed) and exports the
# settings every command shares.
scripts/venv.sh "${1:-requirements.txt}"
# One BLAS thread per process: on 2 shared cores a multi-threaded BLAS spins against the other
# sessions and slows each trace 10x or more; set OPENBLAS_NUM_THREADS yourself to override.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# Two malloc arenas instead of one per session thread: 10 sessions at 128 tokens measured
# 579 MB instead of 611 MB resident.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
# The models are packaged: nothing ever asks the model hub.
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TOKENIZERS_PARALLELISM=false
