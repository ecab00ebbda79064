// libxml2's SAX2 push parser, driven directly by FeedSyncFeed's XMLFeed.
#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU, whose headers clash with the copy of ICU inside Foundation.
// Nothing here touches the ICU converter fields that setting adds, so the headers are read
// without it.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
