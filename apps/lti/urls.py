from django.urls import path

from apps.lti import views

app_name = "lti"

urlpatterns = [
    path("jwks/", views.jwks, name="jwks"),
    path("login/", views.login, name="login"),
    # For platforms that send no client_id with the login: one URL per registration.
    path("login/<uuid:registration_uuid>/", views.login, name="login-registration"),
    path("launch/", views.launch, name="launch"),
    path("deep-link/", views.deep_link, name="deep-link"),
    path("continue/<str:token>/", views.continue_, name="continue"),
]
