/* xpubench public SDK: everything a plugin needs. Plugins include only this directory. */
#ifndef XPUBENCH_XPUBENCH_H
#define XPUBENCH_XPUBENCH_H

#include "status.h"
#include "plugin.h"
#include "comm.h"
#include "program.h"
#include "backend.h"
#include "model.h"
#include "shapes.h"

#endif
