from webapp.settings.env import env, env_int

KAFKA_BOOTSTRAP_SERVERS = env("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092", required_in_production=True)
# Copies of every topic, and how many must hold a record before a producer (acks=all) is told
# it is written: 1 and 1 on one machine; 3 and 2 on a cluster of three brokers, so one broker
# can be lost with nothing acknowledged lost and producers going on.
KAFKA_REPLICATION_FACTOR = env_int("KAFKA_REPLICATION_FACTOR", 1)
KAFKA_MIN_INSYNC_REPLICAS = env_int("KAFKA_MIN_INSYNC_REPLICAS", 1)
