"""A PEP 517 build backend for the trainplan package, standard library only, so that
``pip install ./python`` works offline.  The wheel holds trainplan/*.py and the shared library
(TRAINPLAN_LIBRARY, else ../build/libtrainplan.so); it is tagged for this platform because of
the library."""
import base64
import hashlib
import os
import sysconfig
import zipfile

NAME, VERSION = "trainplan", "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _library():
    path = os.environ.get("TRAINPLAN_LIBRARY") or os.path.join(HERE, "..", "build",
                                                                  "libtrainplan.so")
    if not os.path.exists(path):
        raise RuntimeError("%s not found: run make first, or set TRAINPLAN_LIBRARY" % path)
    return path


def _tag():
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "py3-none-" + plat


def _files():
    pkg = os.path.join(HERE, NAME)
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py"):
            yield os.path.join(pkg, f), NAME + "/" + f
    yield _library(), NAME + "/libtrainplan.so"


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arc, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tag = _tag()
    wheel = "%s-%s-%s.whl" % (NAME, VERSION, tag)
    info = "%s-%s.dist-info" % (NAME, VERSION)
    meta = {
        info + "/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
                            "License: GPL-3.0-or-later\n" % (NAME, VERSION),
        info + "/WHEEL": "Wheel-Version: 1.0\nGenerator: trainplan-backend\n"
                         "Root-Is-Purelib: false\nTag: %s\n" % tag,
    }
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for src, arc in _files():
            with open(src, "rb") as f:
                data = f.read()
            z.writestr(arc, data)
            record.append(_record_line(arc, data))
        for arc, text in meta.items():
            z.writestr(arc, text)
            record.append(_record_line(arc, text.encode()))
        record.append(info + "/RECORD,,")
        z.writestr(info + "/RECORD", "\n".join(record) + "\n")
    return wheel
