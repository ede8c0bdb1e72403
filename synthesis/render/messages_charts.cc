#include "synthesis/render/messages_charts.h"

namespace benchfleet::synthesis {

const ChartMessages& ChartMessagesEn() {
  static const ChartMessages m{
      .shared = "All: ",
      .key_warm = "warm",
      .key_cold = "cold",
      .key_other = "other phase",
      .median_of = "median of",
      .call_desc = "One line per setting (machine, backend, mode, matrix): the accepted runs' figure by call index, "
                   "its name at the line's end. Circles: warm runs; squares: cold runs; triangles: other phases. "
                   "Excluded runs (cache hits, failures) are not drawn.",
      .duration_desc = "One column per cell (machine, backend, mode, matrix, phase), named under the axis: each "
                       "accepted run's wall time as a point, spread sideways so that none hides another. Circles: "
                       "warm runs; squares: cold runs; triangles: other phases. Excluded runs (cache hits, "
                       "failures) are not drawn.",
      .class_title = "Main figure by machine class",
      .class_desc = "One row per setting the verdicts judge (its warm runs, or its cold runs when it was measured "
                    "cold only: hollow squares), grouped by machine class: every accepted run a dot, spread "
                    "vertically so that equal values stay visible; the black tick is the figure the verdict uses "
                    "(the median from five runs, else the worst run); dashed lines are the task's targets.",
      .class_cold_only = "cold only",
      .class_target = "target",
      .worst_run = "worst run",
      .sweep_title = "Sweep of {axis}",
      .sweep_desc = "For each numeric matrix axis a setting was measured at two values or more: the main figure of "
                    "every accepted run against the axis value, the line through the medians (diamonds), one line "
                    "per setting named at its end; and, when the runs carry a latency, the latency against the main "
                    "figure, each point labelled with its axis value (a vertical bar: the range of fewer than five "
                    "runs).",
      .sweep_figure = "{figure} by {axis}",
      .sweep_latency = "{latency} against {figure}",
      .sweep_range = "range",
      .memory_desc = "Peak memory per kind and scope, in GiB, by machine class: for each setting the largest figure "
                     "over its phases. Accelerator memory and host memory (processes, containers, host buffers) are "
                     "drawn in separate panels, each with its own axis; a panel without any figure says so.",
      .not_measured = "Not measured.",
      .peak_in = "peak in",
  };
  return m;
}

const ChartMessages& ChartMessagesFr() {
  static const ChartMessages m{
      .shared = "Commun à tous : ",
      .key_warm = "à chaud",
      .key_cold = "à froid",
      .key_other = "autre phase",
      .median_of = "médiane de",
      .call_desc = "Une ligne par réglage (machine, moteur, mode, matrice) : le chiffre des exécutions retenues par "
                   "rang d'appel, son nom au bout de la ligne. Ronds : exécutions à chaud ; carrés : à froid ; "
                   "triangles : autres phases. Les exécutions écartées (cache, échecs) ne sont pas tracées.",
      .duration_desc = "Une colonne par cellule (machine, moteur, mode, matrice, phase), nommée sous l'axe : la "
                       "durée mesurée de chaque exécution retenue, en point, écartés latéralement pour qu'aucun "
                       "n'en cache un autre. Ronds : à chaud ; carrés : à froid ; triangles : autres phases. Les "
                       "exécutions écartées (cache, échecs) ne sont pas tracées.",
      .class_title = "Chiffre principal par classe de machine",
      .class_desc = "Une rangée par réglage jugé (ses exécutions à chaud, ou à froid quand il n'a été mesuré qu'à "
                    "froid : carrés vides), groupées par classe de machine : chaque exécution retenue en point, "
                    "écartés verticalement pour que les valeurs égales restent visibles ; le trait noir est le "
                    "chiffre du verdict (la médiane dès cinq exécutions, sinon la moins bonne) ; les lignes "
                    "pointillées sont les objectifs de la tâche.",
      .class_cold_only = "à froid seulement",
      .class_target = "objectif",
      .worst_run = "moins bonne exécution",
      .sweep_title = "Balayage de {axis}",
      .sweep_desc = "Pour chaque axe numérique de la matrice mesuré à deux valeurs ou plus pour un réglage : le "
                    "chiffre principal de chaque exécution retenue selon la valeur de l'axe, la ligne des médianes "
                    "(losanges), une ligne par réglage nommée à son bout ; et, quand les exécutions portent une "
                    "latence, la latence selon le chiffre principal, chaque point marqué de sa valeur d'axe (une "
                    "barre verticale : l'étendue de moins de cinq exécutions).",
      .sweep_figure = "{figure} selon {axis}",
      .sweep_latency = "{latency} selon {figure}",
      .sweep_range = "étendue",
      .memory_desc = "Pic mémoire par nature et par portée, en Gio, par classe de machine : pour chaque réglage le "
                     "plus grand chiffre de ses phases. La mémoire de l'accélérateur et la mémoire hôte (processus, "
                     "conteneurs, tampons hôte) sont tracées dans des panneaux séparés, chacun avec son axe ; un "
                     "panneau sans chiffre le dit.",
      .not_measured = "Non mesuré.",
      .peak_in = "pic dans",
  };
  return m;
}

}  // namespace benchfleet::synthesis
