// theme.js: the theme chosen in Settings (light, dark or the system's), applied before the page
// paints. A classic script, so that it runs before the module scripts.
(() => {
  const t = localStorage.getItem("theme");
  if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
  const l = localStorage.getItem("lang") || (navigator.language || "").toLowerCase().startsWith("zh") && "zh";
  if (l === "zh") document.documentElement.lang = "zh-CN";
})();
