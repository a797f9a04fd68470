/* core/tools_sections.h - profile sections (core/tools_sections.c), the layer between the
 * library table (core/tools_load.h) and event dispatch (core/tools.c): what core/tools.c needs
 * beyond the public px_profile_*_section calls of <parex/profiling.h>. */
#ifndef PXI_TOOLS_SECTIONS_H
#define PXI_TOOLS_SECTIONS_H

/* Free the section table; called by pxi_tools_finalize once no launch can reach a section.
 * Not thread-safe: the finalizing thread only. */
void pxi_tools_sections_free(void);

#endif
