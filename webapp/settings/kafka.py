from webapp.settings.env import env

KAFKA_BOOTSTRAP_SERVERS = env("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092", required_in_production=True)
