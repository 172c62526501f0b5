import gc
import os

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun, worker_init

from . import logs

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

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
