from webapp.settings.env import env

# Read by the Spark jobs themselves; exposed here so health checks and pages can show them.
SPARK_MASTER = env("SPARK_MASTER", "local[4]")
SPARK_TRIGGER_MODE = env("SPARK_TRIGGER_MODE", "microbatch")
