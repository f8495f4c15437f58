/* io_port.h — loom.h's loom_io_port (the driver's files and terminal) as
 * the tools' port, tools/tool_io.h. One per run, filled at its start. */
#ifndef LOOM_API_IO_PORT_H
#define LOOM_API_IO_PORT_H

#include "loom.h"
#include "tools/tool_io.h"

typedef struct api_io {
    tool_io tool;              /* what the tools are handed */
    const loom_io_port *port;  /* the driver's, borrowed */
} api_io;

/* Fills io from port: only the callbacks port offers are set. Returns
 * &io->tool, or NULL when port is NULL or offers nothing. */
const tool_io *api_io_init(api_io *io, const loom_io_port *port);

#endif
