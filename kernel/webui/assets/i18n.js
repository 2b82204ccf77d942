// i18n.js: the web UI in English or Simplified Chinese, as the desktop app: the browser's
// language, or the one chosen in Settings (kept in localStorage). Strings are keyed by their
// English text; t(s) translates one, apply() the page's elements marked data-i18n (their text),
// data-i18n-placeholder and data-i18n-label (their aria-label). zh strings go at the end.

const zh = {
  "Chat": "聊天", "Memory": "记忆", "Star map": "星图", "Plugins": "插件", "Settings": "设置",
  "Search memory": "搜索记忆", "What was said about…": "说过什么关于…", "Search": "搜索",
  "Context window": "上下文窗口", "Entities and facts": "实体与事实", "Find an entity": "查找实体",
  "Search stars": "搜索星星", "Kind": "类型", "All kinds": "全部类型", "Scope": "范围", "All scopes": "全部范围",
  "Private": "私有", "Public": "公开", "Zoom out": "缩小", "Zoom in": "放大", "Fit": "适应",
  "Close": "关闭", "Edit": "编辑", "Merge": "合并", "Forget": "遗忘", "Name": "名称", "Notes": "备注",
  "Save": "保存", "Cancel": "取消", "Merge into this one the entity named": "把以下名称的实体合并到此实体",
  "Facts": "事实", "Appearance": "外观", "Language": "语言", "Theme": "主题", "System": "跟随系统",
  "Light": "浅色", "Dark": "深色", "Providers": "模型服务", "Add a provider": "添加模型服务", "Base URL": "基础 URL",
  "Model": "模型", "API key": "API 密钥", "Test": "测试", "Models": "模型", "Signed-in devices": "已登录设备",
  "Sign out of this device": "退出此设备", "Pin": "固定", "Unpin": "取消固定", "Correct": "更正",
  "Open source": "打开来源", "Restart": "重启", "Enable": "启用", "Disable": "停用", "Logs": "日志", "Tools": "工具",
  "Remove": "删除", "Use": "使用", "In use": "使用中", "current": "当前", "ended": "已结束", "superseded": "已被取代",
  "No results.": "没有结果。", "No facts.": "没有事实。", "No plugins.": "没有插件。", "No providers.": "没有模型服务。",
  "Testing…": "测试中…", "Loading the star map…": "正在加载星图…", "Revoke": "撤销", "stars": "颗星",
  "Chats": "聊天列表", "New chat": "新聊天", "Rename": "重命名", "Delete": "删除", "Send": "发送", "Stop": "停止",
  "Message": "消息", "from": "自", "until": "至", "source events": "来源事件", "tokens": "词元", "state": "状态",
  "restarts": "重启次数", "Sparse (BM25) only": "仅稀疏检索 (BM25)", "Search results": "搜索结果",
  "Forgotten.": "已遗忘。", "Saved.": "已保存。", "Merged.": "已合并。", "showing": "显示",
  "Read aloud": "朗读", "Stop reading": "停止朗读", "Could not read the reply aloud:": "无法朗读回复：", "Read replies aloud": "朗读回复",
};

let lang = "en";

// init picks the language: the saved choice, else the browser's.
export function init() {
  const saved = localStorage.getItem("lang");
  lang = saved === "zh" || saved === "en" ? saved : (navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en";
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  return lang;
}

export const current = () => lang;

export function setLang(l) {
  lang = l === "zh" ? "zh" : "en";
  localStorage.setItem("lang", lang);
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  apply(document);
}

export const t = (s) => (lang === "zh" && zh[s]) || s;

// apply translates the marked elements under root; their English text is kept in data-en.
export function apply(root) {
  for (const e of root.querySelectorAll("[data-i18n]")) {
    if (!e.dataset.en) e.dataset.en = e.textContent;
    e.textContent = t(e.dataset.en);
  }
  for (const e of root.querySelectorAll("[data-i18n-placeholder]")) e.placeholder = t(e.dataset.i18nPlaceholder);
  for (const e of root.querySelectorAll("[data-i18n-label]")) e.setAttribute("aria-label", t(e.dataset.i18nLabel));
}
