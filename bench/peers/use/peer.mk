# Our runners on USE, built in a copy of a USE checkout:
#   make -f <this file> peer-runner PEER_MODEL=pcs PEER_OUT=/path/use_pcs LOOKAHEAD=1.0
# USE's own Makefile (included) sets CFLAGS from its configuration variables
# and builds the engine's objects (config, mm, core, reverse); this file adds
# the model object and the link, as USE's model rules do, with two changes:
# the main is ours (pcs_main.c / phold_main.c: our options and PEER line; USE's
# own main is renamed in a copy of core/__core.o), and it stays outside the
# object whose malloc calls USE redirects to LP state memory.
PEER_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
include Makefile

PEER_INCLUDE = $(INCLUDE) -I$(PEER_DIR)/../common -I$(PEER_DIR)

peer-runner: config mm core reverse
	$(CC) -c $(CFLAGS) $(PEER_INCLUDE) $(PEER_DIR)/$(PEER_MODEL).c -o model/__application.o
	ld -r --wrap malloc --wrap free --wrap realloc --wrap calloc -o model/application-mm.o \
		model/__application.o --whole-archive mm/__mm.o
	objcopy --redefine-sym main=use_stock_main core/__core.o core/__core_peer.o
	$(CC) -c $(CFLAGS) $(PEER_INCLUDE) $(PEER_DIR)/$(PEER_MODEL)_main.c -o model/__peer_main.o
	$(CC) $(CFLAGS) -o $(PEER_OUT) model/application-mm.o reverse/__reverse.o \
		core/__core_peer.o model/__peer_main.o $(LIBS)

.PHONY: peer-runner
