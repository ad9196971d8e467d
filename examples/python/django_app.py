"""A Django app rate limited by rl, in one file (settings, views, URLs):

    pip install django   # beside rl (see README.md)
    RL_URL=redis://127.0.0.1:6379 python examples/python/django_app.py [PORT]
    curl -i -H 'X-Api-Key: alice' http://127.0.0.1:8000/hello

rl.django.RateLimitMiddleware limits every request: 5 a minute per API key
(or client address), the RateLimit fields on each answer, 429 with
Retry-After when over. @rl.django.rate_limit gives /bulk a limit of its own
at a cost of 5. Protecting the app took the RL_RATE_LIMIT setting and one
MIDDLEWARE line; one view, one decorator line.
"""

import os
import sys

import django
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

import rl.django

URL = os.environ.get("RL_URL", "memory://")

settings.configure(
    DEBUG=False, ALLOWED_HOSTS=["127.0.0.1", "localhost"], SECRET_KEY="rl-example", ROOT_URLCONF=__name__,
    MIDDLEWARE=["rl.django.RateLimitMiddleware"],
    RL_RATE_LIMIT={
        "URL": URL,
        "LIMITERS": {"api": {"limit": "5/1m"}, "bulk": {"limit": "10/1m"}},
        "MIDDLEWARE": {"limiter": "api", "key": "header:X-Api-Key"},
    },
)
django.setup()


def hello(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"remaining": request.rate_limit.remaining})  # type: ignore[attr-defined]


@rl.django.rate_limit("bulk", key="header:X-Api-Key", cost=5)
def bulk(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"imported": True})


urlpatterns = [path("hello", hello), path("bulk", bulk)]

if __name__ == "__main__":
    from wsgiref.simple_server import make_server

    from django.core.wsgi import get_wsgi_application

    httpd = make_server("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 8000, get_wsgi_application())
    print(f"listening on http://127.0.0.1:{httpd.server_port}", flush=True)
    httpd.serve_forever()
