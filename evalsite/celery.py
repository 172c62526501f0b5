import gc
import os

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun, worker_init

from . import logs

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each area's tasks sit beside its services, in its own ``tasks`` module: the workers import
# these, and any process that sends a task has imported it to send it.
app.autodiscover_tasks(["scoring.ingest", "scoring.live", "scoring.retention"])

# Log lines of a task carry its id, its submission's and the id of the request that sent it.
before_task_publish.connect(logs.add_request_id_header)
task_prerun.connect(logs.bind_task_context)
task_postrun.connect(logs.clear_task_context)


@worker_init.connect
def tune_garbage_collection(**kwargs):
    """Workers parse and score runs by the thousand: each a few hundred small dicts and
    lists, nearly all freed by reference counting. With the default thresholds the cyclic
    collector ran so often, over everything alive, that it doubled the time of a chunk
    (measured with bench/ingest.py). What was loaded at start-up is frozen out of its scans
    (and stays shared with forked children), and young collections run ten times less often."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


@app.on_after_finalize.connect
def schedule_periodic_tasks(sender, **kwargs):
    """Beat's schedule, made of the task objects themselves (docs/operations.md#production):
    the submission sweep every minute, due live traces every CASEBOOK_TRACE_SWEEP_SECONDS,
    and retention daily at CASEBOOK_PRUNE_HOUR."""
    from celery.schedules import crontab
    from django.conf import settings

    from scoring.ingest.tasks import sweep
    from scoring.live.tasks import assemble_due_traces
    from scoring.retention.tasks import prune_expired_runs

    sender.add_periodic_task(60.0, sweep.s(), name="resume-stalled-submissions")
    sender.add_periodic_task(
        settings.CASEBOOK_TRACE_SWEEP_SECONDS, assemble_due_traces.s(), name="assemble-due-traces"
    )
    sender.add_periodic_task(
        crontab(minute=0, hour=settings.CASEBOOK_PRUNE_HOUR),
        prune_expired_runs.s(),
        name="prune-expired-runs",
    )
