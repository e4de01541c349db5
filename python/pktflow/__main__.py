"""``python -m pktflow ...`` runs the ``pktflow`` command line."""

from pktflow._entry import main

main()
