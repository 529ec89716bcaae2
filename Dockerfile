# One container serves a class. Build: docker build -t steplab .   Run: docker run -p 8501:8501 steplab
FROM python:3.11-slim
WORKDIR /srv/steplab
RUN apt-get update && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/*
# Point PIP_FIND_LINKS at a folder holding torch's CPU wheel to keep the image small.
ARG PIP_FIND_LINKS=""
COPY pyproject.toml README.md ./
COPY steplab ./steplab
COPY steplab_ui ./steplab_ui
RUN pip install --no-cache-dir torch==2.13.0 && pip install --no-cache-dir .
COPY app.py ./
COPY pages ./pages
COPY lessons ./lessons
COPY .streamlit ./.streamlit
RUN useradd --create-home steplab
USER steplab
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD curl --fail http://localhost:8501/_stcore/health || exit 1
ENTRYPOINT ["streamlit", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0"]
