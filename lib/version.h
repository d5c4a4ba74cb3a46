/* The one version string of the toolset; scripts get it from here at build time. */
#ifndef SMC_VERSION_H
#define SMC_VERSION_H

#define SMC_TOOLS_RELEASE "1.8.5"

#endif
