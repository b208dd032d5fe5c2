"""noisebench's ReFrame test library, after hpctestlib: the bases of the
checks in reframe/checks/ (base.py). Installed with pip (pip install -e
reframe/), so checks import it as they import hpctestlib."""
