from django.urls import path

from .views import run, submission

urlpatterns = [
    path("suites/<int:pk>/upload/", submission.upload, name="upload"),
    path("submissions/<int:pk>/", submission.detail, name="submission"),
    path("submissions/<int:pk>/progress/", submission.progress, name="submission_progress"),
    path("submissions/<int:pk>/rescore/", submission.rescore, name="submission_rescore"),
    path("submissions/<int:pk>/retry/", submission.retry, name="submission_retry"),
    path("submissions/<int:pk>/delete/", submission.delete, name="submission_delete"),
    path("submissions/<int:pk>/runs/<int:run_id>/", run.detail, name="run"),
]
