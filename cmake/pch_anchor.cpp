// Gives the precompiled-header target a translation unit of its own.
namespace strata::detail {
int pchAnchor() { return 0; }
}  // namespace strata::detail
