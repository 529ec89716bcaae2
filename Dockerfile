# One container serves a class. Build: docker build -t steplab .   Run: docker run -p 8501:8501 steplab
FROM python:3.11-slim
WORKDIR /srv/steplab
RUN apt-get update && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/*
# torch's CPU build keeps the image small (PyPI's Linux wheels are CUDA builds of several GB): it comes from
# PyTorch's CPU index, or from a folder of wheels given as PIP_FIND_LINKS. The rest: the tested versions.
ARG PIP_FIND_LINKS=""
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md constraints.txt ./
COPY steplab ./steplab
COPY steplab_ui ./steplab_ui
RUN pip install --no-cache-dir --extra-index-url "$TORCH_INDEX" -c constraints.txt torch==2.13.0 \
    && pip install --no-cache-dir -c constraints.txt .
COPY app.py serve.py ./
COPY app_pages ./app_pages
COPY lessons ./lessons
COPY .streamlit ./.streamlit
RUN useradd --create-home steplab
USER steplab
EXPOSE 8501
# serve.py imports torch and the views before it answers: a few seconds after start (the start period covers it)
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD curl --fail http://localhost:8501/_stcore/health || exit 1
ENTRYPOINT ["streamlit", "run", "serve.py", "--server.port=8501", "--server.address=0.0.0.0"]
