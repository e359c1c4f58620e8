from webapp.settings.env import database_from_url, env, env_int

DATABASES = {
    "default": {
        **database_from_url(
            env(
                "DATABASE_URL",
                "postgres://sportsbook:sportsbook@127.0.0.1:5432/sportsbook",
                required_in_production=True,
            )
        ),
        "CONN_MAX_AGE": 0,
        "OPTIONS": {
            "pool": {"min_size": 2, "max_size": env_int("DATABASE_POOL_MAX", 20), "timeout": 10},
        },
    }
}
