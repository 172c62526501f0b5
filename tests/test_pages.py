"""Sign-in and the home page, through Django's test client."""

from django.urls import reverse

from cases.models import User


def test_pages_require_sign_in(client, db):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_signed_in_user_sees_the_library_with_their_name_escaped(client, db, password):
    User.objects.create_user("<b>eve</b>", password=password)
    assert client.login(username="<b>eve</b>", password=password)
    page = client.get(reverse("home")).content.decode()
    assert "&lt;b&gt;eve&lt;/b&gt;" in page
    assert "<b>eve</b>" not in page


def test_sign_out_is_a_post_and_ends_the_session(client, user, password):
    client.login(username=user.username, password=password)
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("home")).status_code == 302


def test_the_user_model_is_the_project_one(settings):
    assert settings.AUTH_USER_MODEL == "cases.User"
    assert User._meta.db_table == "cases_user"


def test_api_schema_and_docs_are_served(client, user, password):
    client.login(username=user.username, password=password)
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200
