from django.urls import path

from . import views

urlpatterns = [
    path("suites/<int:pk>/upload/", views.upload, name="upload"),
    path("submissions/<int:pk>/", views.submission_detail, name="submission"),
    path("submissions/<int:pk>/progress/", views.submission_progress, name="submission_progress"),
    path("submissions/<int:pk>/rescore/", views.submission_rescore, name="submission_rescore"),
    path("submissions/<int:pk>/retry/", views.submission_retry, name="submission_retry"),
    path("submissions/<int:pk>/delete/", views.submission_delete, name="submission_delete"),
    path("submissions/<int:pk>/runs/<int:run_id>/", views.run_detail, name="run"),
]
