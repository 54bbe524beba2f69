// kashu web: draw the Plotly figures a page carries, and re-plan as the form changes (no framework).
(function () {
  "use strict";
  function drawCharts(root) {
    if (typeof Plotly === "undefined") return;
    (root || document).querySelectorAll(".chart[data-figure]").forEach(function (el) {
      if (el.dataset.rendered) return;
      try {
        var fig = JSON.parse(el.dataset.figure);
        Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false }).then(function () {
          el.dataset.rendered = "1";
        });
      } catch (e) { el.textContent = String(e); }
    });
  }
  window.kashuDrawCharts = drawCharts;

  function showErrors(form, errors) {
    form.querySelectorAll(".err").forEach(function (s) { s.textContent = ""; });
    Object.keys(errors || {}).forEach(function (k) {
      var s = document.getElementById("err-" + k);
      if (s) s.textContent = errors[k];
    });
  }

  function wirePlanner() {
    var form = document.getElementById("plan-form");
    if (!form) return;
    var result = document.getElementById("result");
    var timer = null, seq = 0;
    function query() {
      var fd = new FormData(form), qs = new URLSearchParams();
      fd.forEach(function (v, k) { if (typeof v === "string" && (v !== "" || k === "lang")) qs.append(k, v); });
      return qs;
    }
    function updateSwitch(qs) {
      var a = document.getElementById("lang-switch");
      if (!a) return;
      var q2 = new URLSearchParams(qs);
      q2.set("lang", a.dataset.lang);
      a.href = location.pathname + "?" + q2.toString();
    }
    function replan() {
      var qs = query(), my = ++seq;
      history.replaceState(null, "", location.pathname + "?" + qs.toString());
      updateSwitch(qs);
      result.classList.add("busy");
      var q2 = new URLSearchParams(qs); q2.set("partial", "1");
      fetch(location.pathname + "?" + q2.toString(), { headers: { "Accept": "text/html" } })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          if (my !== seq) return;
          result.innerHTML = html;
          result.classList.remove("busy");
          var inner = document.getElementById("result-inner");
          var errs = {};
          try { errs = JSON.parse(inner.dataset.errors || "{}"); } catch (e) { errs = {}; }
          showErrors(form, errs);
          drawCharts(result);
          document.body.dataset.planned = String(my);
        })
        .catch(function () { result.classList.remove("busy"); });
    }
    function later() { clearTimeout(timer); timer = setTimeout(replan, 350); }
    form.addEventListener("input", function (ev) {
      var t = ev.target;
      if (t && ["days", "gpus", "budget"].indexOf(t.name) >= 0) {
        var r = form.querySelector('input[name=target][value="' + t.name + '"]');
        if (r) r.checked = true;
      }
      // a model preset and a bare parameter count exclude each other
      var other = t && t.name === "model" ? "params" : (t && t.name === "params" ? "model" : null);
      if (other && t.value.trim() !== "") {
        var o = form.querySelector('[name="' + other + '"]');
        if (o) o.value = "";
      }
      later();
    });
    form.addEventListener("change", later);
    form.addEventListener("submit", function (ev) { ev.preventDefault(); clearTimeout(timer); replan(); });
    updateSwitch(query());
  }

  document.addEventListener("DOMContentLoaded", function () { drawCharts(document); wirePlanner(); });
})();
