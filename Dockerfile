# Application image: Django/Channels web, Celery, the feed and the Spark reducers.
FROM node:20-bookworm-slim AS frontend
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm install --no-audit --no-fund
COPY frontend/ ./
RUN mkdir -p ../odds/static/odds && npm run build

FROM maven:3.9-eclipse-temurin-17 AS jars
WORKDIR /src
COPY infra/maven infra/maven
RUN mvn -q -B -f infra/maven/spark-kafka/pom.xml dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory=/jars/spark-kafka

FROM python:3.11-slim-bookworm
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 DJANGO_SETTINGS_MODULE=webapp.settings \
    SPARK_KAFKA_JARS_DIR=/jars/spark-kafka
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.lock .
RUN pip install -r requirements.lock
COPY --from=jars /jars /jars
COPY . .
COPY --from=frontend /src/odds/static/odds/dist odds/static/odds/dist
RUN DJANGO_SECRET_KEY=build python manage.py collectstatic --no-input -v0
EXPOSE 8000
CMD ["uvicorn", "webapp.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--ws", "websockets", "--lifespan", "on"]
