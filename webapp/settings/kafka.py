from webapp.settings.env import read

KAFKA_BOOTSTRAP_SERVERS = read.text("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092", production_default=False)
# Copies of every topic, and how many must hold a record before a producer (acks=all) is told
# it is written: 1 and 1 on one machine; 3 and 2 on a cluster of three brokers, so one broker
# can be lost with nothing acknowledged lost and producers going on.
KAFKA_REPLICATION_FACTOR = read.whole("KAFKA_REPLICATION_FACTOR", 1)
KAFKA_MIN_INSYNC_REPLICAS = read.whole("KAFKA_MIN_INSYNC_REPLICAS", 1)
