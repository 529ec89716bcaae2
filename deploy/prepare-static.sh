#!/bin/sh
# Copy the frontend of the Streamlit that the replicas run (its static folder: JavaScript, CSS, fonts) to DEST,
# with a gzip beside every text file, for deploy/nginx.conf's `location /static/`: nginx then sends these files
# itself, compressed, and the replicas' Python processes serve only pages, websockets and uploads.
# Run it again after every Streamlit upgrade (file names carry a content hash; a file the copy lacks is fetched
# from a replica, uncompressed).
# Usage: sh deploy/prepare-static.sh DEST [PYTHON]   (PYTHON: the replicas' interpreter, default python3)
set -eu
dest=${1:?usage: prepare-static.sh DEST [PYTHON]}
python=${2:-python3}
src=$("$python" -c 'import os, streamlit; print(os.path.join(os.path.dirname(streamlit.__file__), "static"))')
mkdir -p "$dest"
cp -R "$src/." "$dest/"
find "$dest" -type f \( -name '*.js' -o -name '*.css' -o -name '*.json' -o -name '*.svg' -o -name '*.html' \
    -o -name '*.txt' -o -name '*.map' \) -exec gzip -k -f -9 {} +
echo "Streamlit's frontend from $src is in $dest"
