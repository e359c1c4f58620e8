from webapp.settings.env import env

KAFKA_BOOTSTRAP_SERVERS = env.kafka_bootstrap_servers
# Copies of every topic, and how many must hold a record before a producer (acks=all) is told
# it is written: 1 and 1 on one machine; 3 and 2 on a cluster of three brokers, so one broker
# can be lost with nothing acknowledged lost and producers going on.
KAFKA_REPLICATION_FACTOR = env.kafka_replication_factor
KAFKA_MIN_INSYNC_REPLICAS = env.kafka_min_insync_replicas
